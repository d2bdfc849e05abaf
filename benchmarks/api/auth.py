from rest_framework import authentication, exceptions

from benchmarks.services.tokens import token_user


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Token <key>` with keys hashed at rest."""

    keyword = "Token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if header and header[0].lower() == b"bearer":
            # the usual OAuth habit: say what to send instead of "credentials were not provided"
            raise exceptions.AuthenticationFailed(
                "use 'Authorization: Token <key>', not 'Bearer <key>': this API's keys go with "
                "the Token keyword")
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Token <key>'")
        try:
            key = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("token contains non-ASCII characters") from None
        user = token_user(key=key)
        if user is None:
            raise exceptions.AuthenticationFailed("invalid or revoked token")
        return user, key

    def authenticate_header(self, request):
        return self.keyword
