"""Label as you go: traffic without outcomes (``read``), which items to label (``plan``),
estimates on the whole traffic (``estimate``) and an anytime-valid threshold certificate
(``certify``). Each module states its contract at its top.

- ``read``: the traffic (ids and stated confidence, no outcome; only where the user says it
  is traffic: any format, read by its reader with ``LoadOptions(traffic=True)`` through
  :func:`calib.loading.read_rows`, a CSV of items by its own reader) and the labels joined
  by item id;
- ``plan``: the stratified Neyman labelling plan with inclusion probabilities (the review
  queue at probability 1, a reason per item, plan files a reviewer fills in as labels);
- ``estimate``: the stratified Horvitz-Thompson and PPI++ (difference) estimates;
- ``certify``: the anytime-valid betting certificate of a threshold;
- ``review``: the labelling plan as the Review page's items (kinds by the owner's
  threshold, why each was chosen, the items' text);
- ``budget``: the labels a plan needs to certify (simulated), and the drift and kappa a
  number of labels can detect."""
