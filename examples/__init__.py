"""Examples of simstudy's extension points: a new study, a population and a loss of your own."""
