from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from benchmarks.services.tokens import token_create


class Command(BaseCommand):
    help = "Print a new API token for USERNAME (and nothing else on stdout)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--create-user", action="store_true", help="create the user if absent")
        parser.add_argument("--name", default="created by create_api_token")

    def handle(self, *args, username, create_user, name, **options):
        users = get_user_model()
        user = users.objects.filter(username=username).first()
        if user is None:
            if not create_user:
                raise CommandError(f"no user {username!r} (pass --create-user to create it)")
            user = users.objects.create_user(username=username)
            self.stderr.write(f"created user {username!r} without a password")
        _, key = token_create(user=user, name=name)
        self.stdout.write(key)
