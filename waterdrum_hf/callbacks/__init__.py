"""The callback that logs forget and retain scores during unlearning (:mod:`.callback`), its
plan (:mod:`.plan`: when, on which queries, when to stop) and its script flags
(:mod:`.arguments`)."""
