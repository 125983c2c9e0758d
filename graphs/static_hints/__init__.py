"""A baseline graph: one pre-defined hint per problem (the dataset's `hint` column), leak-checked, no diagnosis."""
