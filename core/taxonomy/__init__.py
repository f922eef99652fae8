"""The label vocabularies: roles, the function taxonomy, moves and the role colours."""
