"""What the instructor hands out: `student_repository` (`autograde release`) with its `readme`, `public_tests`,
`public_mistakes` (with `recordings`, its cache) and `classroom` workflow; `gradescope` (the Gradescope bundle);
`nbgrader_course` (the nbgrader notebooks); `templates/` (the files they ship).
"""
