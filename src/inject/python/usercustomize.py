"""gpujit's start-up hook where the program's own sitecustomize came first on PYTHONPATH (site
runs usercustomize after sitecustomize, where user site-packages are enabled): it starts the hook
late and runs the program's own usercustomize (see _gpujit_site)."""
import _gpujit_site

_gpujit_site.start(__name__)
