"""The paper behind each unlearning method, for the model cards (title, arXiv id, BibTeX)."""

from __future__ import annotations

from waterdrum_hf.trainers._card import Paper

GRAD_ASCENT = Paper(
    title="Knowledge Unlearning for Mitigating Privacy Risks in Language Models",
    arxiv_id="2210.01504",
    citation="""@inproceedings{jang2023knowledge,
  title     = {Knowledge Unlearning for Mitigating Privacy Risks in Language Models},
  author    = {Jang, Joel and Yoon, Dongkeun and Yang, Sohee and Cha, Sungmin and Lee, Moontae and
               Logeswaran, Lajanugen and Seo, Minjoon},
  booktitle = {Proceedings of ACL},
  year      = {2023}
}""",
)

GRAD_DIFF = Paper(
    title="Continual Learning and Private Unlearning",
    arxiv_id="2203.12817",
    citation="""@inproceedings{liu2022continual,
  title     = {Continual Learning and Private Unlearning},
  author    = {Liu, Bo and Liu, Qiang and Stone, Peter},
  booktitle = {Proceedings of the Conference on Lifelong Learning Agents (CoLLAs)},
  year      = {2022}
}""",
)

TOFU = Paper(
    title="TOFU: A Task of Fictitious Unlearning for LLMs",
    arxiv_id="2401.06121",
    citation="""@inproceedings{maini2024tofu,
  title     = {{TOFU}: A Task of Fictitious Unlearning for {LLMs}},
  author    = {Maini, Pratyush and Feng, Zhili and Schwarzschild, Avi and Lipton, Zachary C. and
               Kolter, J. Zico},
  booktitle = {Proceedings of the Conference on Language Modeling (COLM)},
  year      = {2024}
}""",
)

SCRUB = Paper(
    title="Towards Unbounded Machine Unlearning",
    arxiv_id="2302.09880",
    citation="""@inproceedings{kurmanji2023towards,
  title     = {Towards Unbounded Machine Unlearning},
  author    = {Kurmanji, Meghdad and Triantafillou, Peter and Hayes, Jamie and
               Triantafillou, Eleni},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS)},
  year      = {2023}
}""",
)

NPO = Paper(
    title="Negative Preference Optimization: From Catastrophic Collapse to Effective Unlearning",
    arxiv_id="2404.05868",
    citation="""@inproceedings{zhang2024negative,
  title     = {Negative Preference Optimization: From Catastrophic Collapse to Effective
               Unlearning},
  author    = {Zhang, Ruiqi and Lin, Licong and Bai, Yu and Mei, Song},
  booktitle = {Proceedings of the Conference on Language Modeling (COLM)},
  year      = {2024}
}""",
)

SIMNPO = Paper(
    title="Simplicity Prevails: Rethinking Negative Preference Optimization for LLM Unlearning",
    arxiv_id="2410.07163",
    citation="""@inproceedings{fan2025simplicity,
  title     = {Simplicity Prevails: Rethinking Negative Preference Optimization for {LLM}
               Unlearning},
  author    = {Fan, Chongyu and Liu, Jiancheng and Lin, Licong and Jia, Jinghan and Zhang, Ruiqi
               and Mei, Song and Liu, Sijia},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS)},
  year      = {2025}
}""",
)

DPO = Paper(
    title="Direct Preference Optimization: Your Language Model is Secretly a Reward Model",
    arxiv_id="2305.18290",
    citation="""@inproceedings{rafailov2023direct,
  title     = {Direct Preference Optimization: Your Language Model is Secretly a Reward Model},
  author    = {Rafailov, Rafael and Sharma, Archit and Mitchell, Eric and Manning, Christopher D.
               and Ermon, Stefano and Finn, Chelsea},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS)},
  year      = {2023}
}""",
)

TASK_ARITHMETIC = Paper(
    title="Editing Models with Task Arithmetic",
    arxiv_id="2212.04089",
    citation="""@inproceedings{ilharco2023editing,
  title     = {Editing Models with Task Arithmetic},
  author    = {Ilharco, Gabriel and Ribeiro, Marco Tulio and Wortsman, Mitchell and
               Gururangan, Suchin and Schmidt, Ludwig and Hajishirzi, Hannaneh and Farhadi, Ali},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2023}
}""",
)
