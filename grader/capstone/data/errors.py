"""The one error of the data package (standard library only, like paths.py and wheel.py: the
message catalog it reads, grader/course/messages.py, is too)."""

from ...course.messages import Msg, code


class DataError(ValueError):
    """A data source that is missing, malformed or mislabelled; the message says which and what to do.

    Raised with a catalog text (`DataError(Msg.key(...))`), its message is in the reader's
    language (`kata --lang`, KATA_LANG, the locale), and `msg` keeps both languages: a text that
    must read the same in every run (a corpus's notes, which metrics.json records) takes
    `e.msg.render("en")`. A plain string (pip's error, say) reads the same in both."""

    def __init__(self, message):
        self.msg = message if isinstance(message, Msg) else code(str(message))
        super().__init__(self.msg.render())
