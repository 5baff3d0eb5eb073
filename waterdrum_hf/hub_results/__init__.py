"""WaterDrum values as the Hugging Face Hub records them: where they were measured
(:mod:`.config`) and the model card's ``model-index`` and ``.eval_results/`` files, written or
pushed (:mod:`.publish`). The callback and ``waterdrum score`` write them."""
