// MathJax 2's settings for the manual grading page, read by MathJax.js as it starts (it loads after this file).
// nbconvert writes them in a text/x-mathjax-config block, which MathJax would evaluate: the page's policy
// (autograder/course/page_policy.py) allows no such evaluation.
window.MathJax = {
  TeX: { equationNumbers: { autoNumber: "AMS", useLabelIds: true } },
  tex2jax: {
    inlineMath: [["$", "$"], ["\\(", "\\)"]],
    displayMath: [["$$", "$$"], ["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  displayAlign: "center",
  messageStyle: "none",
  CommonHTML: { linebreaks: { automatic: true } },
};
