from django import forms

from .targets import TARGET_TYPES


class ThreadStartForm(forms.Form):
    subject = forms.CharField(max_length=300)
    body = forms.CharField(strip=False,  # leading blanks align pasted tables
                           widget=forms.Textarea(attrs={"rows": 14, "class": "mail-input"}))
    target_type = forms.ChoiceField(
        choices=[("", "")] + [(t, t) for t in TARGET_TYPES], required=False,
        widget=forms.HiddenInput)
    target_id = forms.CharField(max_length=100, required=False, widget=forms.HiddenInput)


class ReplyForm(forms.Form):
    subject = forms.CharField(max_length=300, required=False)
    body = forms.CharField(strip=False,
                           widget=forms.Textarea(attrs={"rows": 16, "class": "mail-input"}))


class ImportForm(forms.Form):
    file = forms.FileField(help_text=".mbox or .mbox.gz, as downloaded from a list archive")
    target_type = forms.ChoiceField(choices=[("", "")] + [(t, t) for t in TARGET_TYPES],
                                    required=False, label="attach to")
    target_id = forms.CharField(max_length=100, required=False, label="id")
