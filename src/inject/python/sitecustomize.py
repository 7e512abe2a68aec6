"""The start-up hook of ``gpujit profile``: first on PYTHONPATH in every Python process of the
profiled tree (see _gpujit_site). It imports only the standard library, nothing it does reaches
the program, and the program's own sitecustomize runs as it would have."""
import _gpujit_site

_gpujit_site.start(__name__)
