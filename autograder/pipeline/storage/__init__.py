"""What grading keeps in the grading folder: results, gradebooks, refused hand-ins, reference times."""
