"""torch.autograd.profiler.record_function: a named range. `opened` lists
the names of the ranges entered, for the test to see what reached torch."""

opened = []


class record_function:
    def __init__(self, name, args=None):
        self.name = name
        self.args = args

    def __enter__(self):
        opened.append(self.name)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None
