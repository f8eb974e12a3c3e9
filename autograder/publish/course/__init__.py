"""The course gradebook: every assignment's gradebook and the roster, read together, and what is written from it.

`autograder gradebook --to DIR` in one package, in the order it runs:
  book.py     read_course_book: one CourseBook, a row per student, from every assignment's gradebook.db
              and the course's records (grades/course.db)
  sheets.py   course_grades.csv, course_grades.xlsx and history.csv, for the teaching team
  report.py   semester_report.html: every assignment side by side, and who needs a look
  imports.py  an import file for each LMS (Canvas, Moodle, Gradescope, Classroom, Blackboard, D2L)
  write.py    write_course_gradebook: all of the above into DIR, refused while anything is not known
One assignment's release (`autograder release`) is publish/lms.py; both name students through who.py's
rules, the roster's ids first.
"""
