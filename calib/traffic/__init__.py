"""Label as you go: traffic without outcomes (``read``), which items to label (``plan``),
estimates on the whole traffic (``estimate``) and an anytime-valid threshold certificate
(``certify``). Each module states its contract at its top."""
