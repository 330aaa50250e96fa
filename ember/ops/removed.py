"""Functions torch has removed but still names: calling one raises torch's RuntimeError, whose
first line says so, followed (in ember's words) by what replaces it.

torch.eig, torch.lstsq, torch.solve, torch.symeig and torch.matrix_rank (and the Tensor methods
of the first four) were removed in favour of torch.linalg; Tensor.reinforce long before, in
favour of torch.distributions.
"""
__all__ = ["eig", "lstsq", "solve", "symeig", "matrix_rank", "METHODS"]

_REMOVED = "This function was deprecated since version 1.9 and is now removed."

_REPLACEMENTS = {
    "eig": "Use torch.linalg.eigvals(A) for the eigenvalues and torch.linalg.eig(A) for "
           "eigenvalues and eigenvectors; both return complex tensors.",
    "lstsq": "Use torch.linalg.lstsq(A, B).solution: its arguments are in the other order, "
             "and it returns no QR decomposition.",
    "solve": "Use torch.linalg.solve(A, B): its arguments are in the other order, and it "
             "returns no LU factorization.",
    "symeig": "Use torch.linalg.eigvalsh(A, UPLO) for the eigenvalues and "
              "torch.linalg.eigh(A, UPLO) for eigenvalues and eigenvectors; both read the lower "
              "triangle by default.",
    "matrix_rank": "Use torch.linalg.matrix_rank(A, hermitian=...) instead.",
}


def _raise(name):
    raise RuntimeError(f"{_REMOVED}\n{_REPLACEMENTS[name]}")


# (torch's signatures, so that wrong arguments get Python's TypeError first)
def eig(self, eigenvectors=False, *, e=None, v=None):
    _raise("eig")


def lstsq(input, A, *, out=None):
    _raise("lstsq")


def solve(input, A, *, out=None):
    _raise("solve")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    _raise("symeig")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    _raise("matrix_rank")


def _eig_method(self, eigenvectors=False):
    _raise("eig")


def _lstsq_method(self, other):
    _raise("lstsq")


def _solve_method(self, other):
    _raise("solve")


def _symeig_method(self, eigenvectors=False):
    _raise("symeig")


def reinforce(self, reward):
    raise RuntimeError("reinforce() was removed.\nUse torch.distributions instead: sample from "
                       "a distribution and add -log_prob(action) * reward to the loss.")


METHODS = {"eig": _eig_method, "lstsq": _lstsq_method, "solve": _solve_method,
           "symeig": _symeig_method, "reinforce": reinforce}
