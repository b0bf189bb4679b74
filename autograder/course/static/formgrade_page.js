// The manual grading page's own script (templates/formgrade/index.html.j2): what nbgrader's page wrote inline,
// moved here so that the page's policy can refuse every inline script (autograder/course/page_policy.py).
// nbgrader's formgrade.js reads these four globals as it loads.
function tfcoursePageValue(name) {
  var meta = document.querySelector('meta[name="tfcourse-' + name + '"]');
  return meta ? meta.getAttribute("content") : "";
}
var submission_id = tfcoursePageValue("submission-id");
var notebook_id = tfcoursePageValue("notebook-id");
var assignment_id = tfcoursePageValue("assignment-id");
var base_url = tfcoursePageValue("base-url");

function toggle_name(on) {
  $(".name-shown").tooltip("hide");
  $(".name-hidden").tooltip("hide");
  $(on ? ".name-shown" : ".name-hidden").show();
  $(on ? ".name-hidden" : ".name-shown").hide();
}

$(document).ready(function () {
  $("[data-link]").each(function () {
    $(this).map(linkTo("notebook", $(this).data("link"))).removeAttr("data-link");
  });
  $("span.glyphicon.name-hidden")
    .tooltip({ title: "Show student name", placement: "bottom", trigger: "hover" })
    .on("click", function () { toggle_name(true); });
  $("span.glyphicon.name-shown")
    .tooltip({ title: "Hide student name", placement: "bottom", trigger: "hover" })
    .on("click", function () { toggle_name(false); });
});
