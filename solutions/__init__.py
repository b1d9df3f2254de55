"""Week 07 · Recurrent Networks: the exercises."""
