# dsh-terminal-bash: a PYTHONSTARTUP file that marks the interactive Python prompt, so a terminal
# session can tell exactly when Python waits for the next input. The marker is an invisible OSC
# sequence (OSC 133;A;k=r;<nonce>;<pid>;<prompt length>;<name> BEL) before sys.ps1 and sys.ps2.
# The user's own PYTHONSTARTUP runs first, so a prompt it sets is kept (and marked). Nothing happens
# without the session's nonce.
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

    # The module's names are deleted once this file ran; the prompts keep their own references.
    modules, caller_frame, isatty, write = _dsh_sys.modules, _dsh_sys._getframe, _dsh_os.isatty, _dsh_os.write

    def prompt_fd():
        # Where the interpreter's own loop prints a prompt: through readline to stdout when stdin
        # and stdout are terminals, else (no readline, or redirected) to stderr.
        try:
            if "readline" in modules and isatty(0) and isatty(1):
                return 1
            return 2 if isatty(2) else None
        except OSError:
            return None

    def write_all(fd, data):
        while data:
            data = data[write(fd, data):]

    class MarkedPrompt:
        def __init__(self, prompt, primary):
            self.prompt = prompt
            self.primary = primary

        def __str__(self):
            text = str(self.prompt)
            marker = "\033]133;A;k=r;%s;%d;%d;%s\007" % (nonce, pid, len(text), name or "python")
            # The interpreter's C loop asks for sys.ps1 (no Python frame calls us) right before it
            # prints it: the marker goes ahead in one write. Readline prints a prompt byte by byte
            # when stdout is unbuffered (PYTHONUNBUFFERED), so each marker byte left in the prompt
            # costs a system call per round trip. The loop asks for sys.ps2 at the same moment but
            # prints it only on continuation lines, later and again without asking: it keeps its
            # marker inside.
            try:
                caller_frame(1)
            except ValueError:
                fd = prompt_fd() if self.primary else None
                if fd is not None:
                    try:
                        write_all(fd, marker.encode("ascii"))
                        return text
                    except OSError:
                        pass
            # Otherwise (and whenever Python code asks: the 3.13 REPL redraws its prompt on every
            # key) the marker stays in the prompt, wrapped in \001 \002 so it is not counted as width.
            return "\001" + marker + "\002" + text

    _dsh_sys.ps1 = MarkedPrompt(getattr(_dsh_sys, "ps1", ">>> "), True)
    _dsh_sys.ps2 = MarkedPrompt(getattr(_dsh_sys, "ps2", "... "), False)


_dsh_mark_prompts()
del _dsh_mark_prompts, _dsh_os, _dsh_sys
