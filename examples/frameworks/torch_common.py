"""PyTorch pieces shared by the torch_* job scripts: deterministic kernels, the MLP, the growth
buffers and the checksum of the final weights. Import it before anything else imports torch."""
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS: deterministic kernels
import torch  # noqa: E402
from torch import nn  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = False  # no timing-based choice of kernels
torch.backends.cudnn.deterministic = True
torch.use_deterministic_algorithms(True, warn_only=True)


def mlp(d_in=1024, width=4096, depth=4, d_out=1024):
    """depth Linear layers (42M parameters by default) with ReLUs between them."""
    layers, d = [], d_in
    for _ in range(depth - 1):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, d_out))
    return nn.Sequential(*layers)


def train_step(model, opt, loss_fn, x, y):
    loss = loss_fn(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def growth(args, device):
    """common.Growth for PyTorch: what the caching allocator reserved, grown by written tensors."""
    import common

    def allocate(nbytes, k):
        return torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(k + 1.0)

    return common.Growth(args, lambda: torch.cuda.memory_reserved(device), allocate)


def checksum(model):
    """Sum and sum of squares of all weights in float64, as one %.6e token."""
    with torch.no_grad():
        total = sum(p.double().sum() + p.double().square().sum() for p in model.parameters())
    return f"{total.item():.6e}"
