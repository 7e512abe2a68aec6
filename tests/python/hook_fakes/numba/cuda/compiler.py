import time


def compile_cuda(pyfunc, return_type, args, debug=False, lineinfo=False, forceinline=False):
    if getattr(pyfunc, "bad", False):
        raise ValueError("cannot type " + pyfunc.__name__)
    time.sleep(0.002)
    return ("cres", pyfunc.__name__, args)


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True, output="ptx"):
    compile_cuda(pyfunc, None, sig, debug=debug)
    return "ptx of " + pyfunc.__name__


def compile_ptx(pyfunc, sig, debug=None, lineinfo=False, device=False):
    return compile(pyfunc, sig, debug=debug, device=device)
