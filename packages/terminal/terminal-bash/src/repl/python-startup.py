# dsh-terminal-bash: a PYTHONSTARTUP file that marks the interactive Python prompt, so a terminal
# session can tell exactly when Python waits for the next input. The marker is an invisible OSC
# sequence (OSC 133;A;k=r;<nonce>;<pid>;<prompt length>;<name> BEL) before sys.ps1 and sys.ps2,
# wrapped in \001 \002 so readline does not count it as width. The user's own PYTHONSTARTUP runs
# first, so a prompt it sets is kept (and marked). Nothing happens without the session's nonce.
import os as _dsh_os
import sys as _dsh_sys


def _dsh_mark_prompts():
    environ = _dsh_os.environ
    nonce = environ.pop("DSH_PYTHON_MARKER", "")
    user_startup = environ.pop("DSH_USER_PYTHONSTARTUP", "")
    # Programs started from this REPL see the user's own startup file, not this one.
    if user_startup:
        environ["PYTHONSTARTUP"] = user_startup
    else:
        environ.pop("PYTHONSTARTUP", None)
    if user_startup and _dsh_os.path.isfile(user_startup):
        with open(user_startup) as source:
            exec(compile(source.read(), user_startup, "exec"), globals())
    if not nonce.isdigit():
        return
    pid = _dsh_os.getpid()
    name = "".join(c for c in _dsh_os.path.basename(_dsh_sys.executable or "python") if c.isalnum() or c in "._-")[:32]

    class MarkedPrompt:
        def __init__(self, prompt):
            self.prompt = prompt

        def __str__(self):
            text = str(self.prompt)
            return "\001\033]133;A;k=r;%s;%d;%d;%s\007\002%s" % (nonce, pid, len(text), name or "python", text)

    _dsh_sys.ps1 = MarkedPrompt(getattr(_dsh_sys, "ps1", ">>> "))
    _dsh_sys.ps2 = MarkedPrompt(getattr(_dsh_sys, "ps2", "... "))


_dsh_mark_prompts()
del _dsh_mark_prompts, _dsh_os, _dsh_sys
