"""The lab's commands: ``rhetorica train|export|data|eval|bench …``.

How the model is trained, measured and shipped: these read the shared corpora and write under
``runs/``; an author never needs them (``rhetorica --help`` lists them apart, under "lab commands").
The author's verbs are the modules beside this package in ``app/commands/``. Same rules as there:
the standard library at module level, heavy imports inside the function that runs the command.
"""
