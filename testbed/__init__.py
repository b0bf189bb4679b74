"""What the test suite and the benchmarks both build on, so that neither imports the other's code.

The variants of every answer (:mod:`.variants`: the mutants and the differently written correct answers), the
classes generated from them for the similarity report (:mod:`.similarity_class` and its disguises and styles),
nbgrader's course folders as collect fills them (:mod:`.nbgrader_course`), and the drivers of a real JupyterLab
(:mod:`.lab`) and a real hub (:mod:`.hub`). Instructors' and maintainers' tooling: not shipped with the packages.
"""
