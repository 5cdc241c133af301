"""The checks of a server test script: a failed one is printed when it happens and kept, and
report() prints the outcome and gives the script's exit status."""


class Checks:
    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        """Records `what` as a failure (and prints it) when `cond` is false."""
        if not cond:
            self.failures.append(what)
            print("FAIL:", what, flush=True)

    def report(self, passed):
        """Prints the number of failed checks, or `passed` when there were none; returns the
        exit status (1 or 0)."""
        if self.failures:
            print(f"{len(self.failures)} check(s) failed")
            return 1
        print(passed)
        return 0
