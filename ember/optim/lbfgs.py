"""L-BFGS: quasi-Newton steps from a limited history of (gradient change, step) pairs, with a
fixed step length or a strong-Wolfe line search. step() needs a closure that recomputes the
loss (and the gradients).

All parameters are handled as one flat vector. The arithmetic is written in ember's tensor ops
on that vector (the scalars that come out of it, such as y.s, stay 0-dim tensors), in PyTorch's
order, so that the values, and the types kept in the state (a float or a 0-dim tensor), agree.
"""
import numpy as np

from .._tensor import Tensor
from ..autograd import grad_mode
from ..ops.complex import view_as_real
from ..ops.joining import cat
from ..ops.arithmetic import mul
from ..ops.registry import xp_of
from .optimizer import Optimizer, check_lr, real, scalar, written


def _add_scaled_(x, other, alpha):
    """x += alpha * other, in place, rounded once: PyTorch's CPU kernel fuses the multiply
    and the add (for float32, a float64 computation gives the same result), and here an
    iteration can turn on the last bit. `other` may have another shape with x's numel."""
    a = real(x._data)
    alpha = a.dtype.type(alpha)                 # (rounded to x's dtype first, as PyTorch)
    wide = np.promote_types(a.dtype, np.float64)
    b = real(other._data).reshape(a.shape)
    xp_of(x._device).copyto(a, a.astype(wide) + b.astype(wide) * wide.type(alpha),
                            casting="unsafe")
    written(x)


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, kept
    within `bounds` (by default the interval between the two points); the middle of the
    bounds when the cubic has no minimum."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 ** 2 - g1 * g2
    if not disc >= 0:                   # (NaN included)
        return (lo + hi) / 2.0
    d2 = disc.sqrt()
    # measured from the farther point of the two (the one with the larger x)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _number(loss):
    """The closure's loss as a Python float. (Detached first: under no_grad, PyTorch does not
    warn about converting a tensor that requires grad.)"""
    return float(loss.detach() if isinstance(loss, Tensor) else loss)


class _Bracket:
    """The points of the line search's bracket: step t, loss f, gradient g and slope gtd."""

    def __init__(self, *points):
        self.t, self.f, self.g, self.gtd = (list(col) for col in zip(*points))

    def set(self, i, t, f, g, gtd):
        self.t[i], self.f[i], self.g[i], self.gtd[i] = t, f, g, gtd

    def low_high(self):
        return (0, 1) if self.f[0] <= self.f[-1] else (1, 0)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step length along `d` satisfying the strong Wolfe conditions (sufficient decrease
    and small slope), from the start point's loss `f`, gradient `g` and slope `gtd`.
    Returns (loss, gradient, step, number of evaluations)."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = evaluate(t, d)
    evals = 1
    gtd_new = g_new.dot(d)

    # 1. bracketing: grow the step until an interval holds an acceptable point
    prev = (0, f, g, gtd)
    found = False
    tries = 0
    bracket = None
    while tries < max_ls:
        too_far = f_new > (f + c1 * t * gtd) or (tries > 1 and f_new >= prev[1])
        if not too_far and abs(gtd_new) <= -c2 * gtd:
            bracket = _Bracket((t, f_new, g_new, None))
            found = True
            break
        if too_far or gtd_new >= 0:         # the minimum lies between prev and t
            bracket = _Bracket(prev, (t, f_new, g_new.clone(),
                                      gtd_new))
            break
        # extrapolate, between 1.01 t and 10 t
        t_next = _cubic_minimum(prev[0], prev[1], prev[3], t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - prev[0]), t * 10))
        prev = (t, f_new, g_new.clone(), gtd_new)
        t = t_next
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        tries += 1
    if tries == max_ls:
        bracket = _Bracket((0, f, g, None), (t, f_new, g_new, None))

    # 2. zoom: shrink the bracket around the acceptable point
    stalled = False
    low, high = bracket.low_high()
    while not found and tries < max_ls:
        ts = bracket.t
        if abs(ts[1] - ts[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(ts[0], bracket.f[0], bracket.gtd[0],
                           ts[1], bracket.f[1], bracket.gtd[1])
        # a trial too close to an end: after a stall (or outside), move it 10% inside
        top, bottom = max(ts), min(ts)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:
            if stalled or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False

        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        tries += 1
        point = (t, f_new, g_new.clone(), gtd_new)
        if f_new > (f + c1 * t * gtd) or f_new >= bracket.f[low]:
            bracket.set(high, *point)
            low, high = bracket.low_high()
        else:
            if abs(gtd_new) <= -c2 * gtd:
                found = True
            elif gtd_new * (ts[high] - ts[low]) >= 0:
                bracket.set(high, ts[low], bracket.f[low], bracket.g[low], bracket.gtd[low])
            bracket.set(low, *point)
    return bracket.f[low], bracket.g[low], bracket.t[low], evals


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ------------------------------------------------------------------ the flat vector
    def _flat_grad(self):
        """All gradients as one vector (zeros for a parameter without one; complex ones as
        their real and imaginary parts)."""
        views = []
        for p in self._params:
            g = p.new(p.numel()).zero_() if p.grad is None else p.grad.view(-1)
            views.append(view_as_real(g).view(-1) if g.is_complex() else g)
        return cat(views, 0)

    def _move(self, step, direction):
        """params += step * direction (the direction a flat vector)."""
        offset = 0
        for p in self._params:
            n = p.numel() * (2 if p.is_complex() else 1)
            _add_scaled_(p, direction[offset:offset + n], step)
            offset += n

    def _evaluate_at(self, closure, start, t, d):
        """Loss and flat gradient at start + t d; the parameters go back to `start`."""
        self._move(t, d)
        loss = _number(closure())
        g = self._flat_grad()
        for p, saved in zip(self._params, start):
            p.copy_(saved)
        return loss, g

    # ------------------------------------------------------------------ the step
    def step(self, closure):
        """Up to max_iter L-BFGS iterations, each calling the closure (with grad mode on);
        returns the closure's first loss."""
        with grad_mode.no_grad():
            return self._step(grad_mode.enable_grad()(closure))

    def _step(self, closure):
        group = self.param_groups[0]
        lr = scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # the state is global; it is kept as the first parameter's (so load_state_dict
        # moves it along with the parameters)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = _number(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        converged = False
        for n_iter in range(1, max_iter + 1):
            state["n_iter"] += 1
            first = state["n_iter"] == 1

            # the search direction
            if first:
                d = flat_grad.neg()
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                y = flat_grad.sub(prev_flat_grad)      # the gradient's change
                s = d.mul(t)                           # the last step
                ys = y.dot(s)
                if ys > 1e-10:                         # curvature condition: remember it
                    if len(old_dirs) == history_size:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)             # the initial inverse Hessian's scale
                d = self._two_loop(state, flat_grad, old_dirs, old_stps, ro, H_diag,
                                   history_size)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the step length: the first ever is scaled down by the gradient's size
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if first else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:                # not a descent direction any more
                break

            step_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                start = [p.clone() for p in self._params]
                loss, flat_grad, t, step_evals = _strong_wolfe(
                    lambda t_, d_: self._evaluate_at(closure, start, t_, d_),
                    t, d, loss, flat_grad, gtd, max_ls=max_eval - evals)
                self._move(t, d)
                converged = flat_grad.abs().max() <= tolerance_grad
            else:
                self._move(t, d)
                if n_iter != max_iter:
                    # no evaluation after the last iteration: the next step() makes one
                    loss = _number(closure())
                    flat_grad = self._flat_grad()
                    converged = flat_grad.abs().max() <= tolerance_grad
                    step_evals = 1
            evals += step_evals
            state["func_evals"] += step_evals

            if n_iter == max_iter or evals >= max_eval or converged:
                break
            if d.mul(t).abs().max() <= tolerance_change or \
                    abs(loss - prev_loss) < tolerance_change:
                break                                  # no progress

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    @staticmethod
    def _two_loop(state, flat_grad, old_dirs, old_stps, ro, H_diag, history_size):
        """The L-BFGS direction -H g, H the inverse Hessian the history approximates (the
        two-loop recursion, on one buffer). The coefficients are kept in state["al"]."""
        al = state.setdefault("al", [None] * history_size)
        q = flat_grad.neg()
        for i in reversed(range(len(old_dirs))):
            al[i] = old_stps[i].dot(q) * ro[i]
            _add_scaled_(q, old_dirs[i], -al[i])
        r = mul(q, H_diag)
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            _add_scaled_(r, old_stps[i], al[i] - be_i)
        return r
