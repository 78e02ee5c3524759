"""Commands that put the layers below together: `from_hf` (a bundle from a Hugging Face checkpoint,
with a hypernetwork from hyper/; the studio runs `python -m pskills_train.commands.from_hf`) and
`distill_meta` (the hypernetwork taught by distillation, from distill/, evals/ loaders and hyper/)."""
