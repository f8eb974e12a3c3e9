"""A failure to reach Canvas or a refusal from it, in its own module: what reads a pull's folder (canvas_pull.py,
at every `grade`) names it without loading canvasapi and requests (a tenth of a CPU second at each start)."""

from ..core.errors import AutograderError


class CanvasError(AutograderError):
    """Canvas cannot be reached, or refused; `status` is its HTTP status (0: no answer)."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status
