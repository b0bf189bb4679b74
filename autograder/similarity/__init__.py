"""``similarity``: which pairs of a class's answers are closer than independent work explains.

- :mod:`.answers`: what each submission wrote (answer cells by grade id, cells the student added),
  what the release already holds (the boilerplate) and the reference solutions;
- :mod:`.fingerprints`: code normalised (comments, whitespace, names) and fingerprinted with
  copydetect's winnowing, and the matched slices of two answers;
- :mod:`.scores`: pair scores for a whole class from its fingerprint sets, robust z-scores;
- :mod:`.compare`: the step itself, over a :class:`~autograder.course.course.Course`, kept in
  ``grading/similarity.json``;
- :mod:`.page`: the HTML page, the ranked pairs side by side;
- :mod:`.command`: ``python -m autograder similarity``, each notebook compared and the page written.
"""
