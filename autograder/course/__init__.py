"""What the course is: its folders and grading folder, nbgrader's settings, which cells are answers and tests."""
