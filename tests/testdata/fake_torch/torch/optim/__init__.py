from .optimizer import Optimizer


class SGD(Optimizer):
    def step(self, closure=None):
        self.steps_taken += 1
