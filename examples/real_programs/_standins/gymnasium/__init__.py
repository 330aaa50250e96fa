"""A stand-in for the piece of gymnasium the reinforcement-learning examples touch: CartPole-v1.

Not gymnasium: the classic cart-pole of Barto, Sutton and Anderson (1983), integrated with
Euler steps of 0.02 s, written here from the published equations. The episode ends when the
pole leans past 12 degrees or the cart leaves +-2.4, and is cut at 500 steps. The reset state
is drawn from NumPy's generator seeded by `reset(seed=...)`, so a torch run and an ember run
see the same episodes as long as their actions agree.

`STANDIN_REWARD_THRESHOLD` (default 475, CartPole-v1's) lets a runner end a program that
trains "until solved" after a few episodes.
"""
import math
import os
from types import SimpleNamespace

import numpy as np


class CartPole:
    gravity, cart_mass, pole_mass, half_length, force, dt = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    angle_limit, position_limit, max_steps = 12 * 2 * math.pi / 360, 2.4, 500

    def __init__(self):
        self.spec = SimpleNamespace(
            id="CartPole-v1", max_episode_steps=self.max_steps,
            reward_threshold=float(os.environ.get("STANDIN_REWARD_THRESHOLD", 475.0)))
        self._rng = np.random.default_rng()
        self.state, self.steps = None, 0

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self._rng.uniform(-0.05, 0.05, size=4)
        self.steps = 0
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force if action == 1 else -self.force
        total_mass = self.cart_mass + self.pole_mass
        pole_moment = self.pole_mass * self.half_length
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + pole_moment * theta_dot ** 2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.half_length * (4.0 / 3.0 - self.pole_mass * cos ** 2 / total_mass))
        x_acc = temp - pole_moment * theta_acc * cos / total_mass
        x, x_dot = x + self.dt * x_dot, x_dot + self.dt * x_acc
        theta, theta_dot = theta + self.dt * theta_dot, theta_dot + self.dt * theta_acc
        self.state = np.array([x, x_dot, theta, theta_dot])
        self.steps += 1
        terminated = bool(abs(x) > self.position_limit or abs(theta) > self.angle_limit)
        truncated = self.steps >= self.max_steps
        return self.state.astype(np.float32), 1.0, terminated, truncated, {}

    def render(self):
        pass


def make(name, render_mode=None, **kwargs):
    if name != "CartPole-v1":
        raise ValueError(f"the gymnasium stand-in has only CartPole-v1, not {name!r}")
    return CartPole()
