#!/usr/bin/env python3
"""Run a command on a pseudo-terminal and print the final screen text.

usage: ptyscreen.py [--cols N] [--raw FILE] [--interrupt-on REGEX] -- COMMAND [ARGS...]

The command's stdout and stderr both go to the terminal, as in an
interactive shell.  What it wrote is replayed on a small terminal model
(printable text, CR, LF, BS, ESC[nA cursor up, ESC[K erase to end of line,
ESC[2K erase line; other escape sequences are dropped) and the resulting
screen lines are printed, trailing blanks removed.  The exit status is the
command's.  --raw FILE keeps the bytes as written.  --interrupt-on REGEX
sends SIGINT to the command's process group (what Ctrl-C does) once, when
the bytes written so far (escape sequences removed) first match REGEX.
Standard library only.
"""
import os
import pty
import re
import select
import signal
import struct
import sys
import fcntl
import termios

CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")


def screen(raw: bytes, cols: int):
    data = raw.decode("utf-8", "replace")  # one column per character
    lines = [[]]
    row = col = 0
    i = 0
    while i < len(data):
        ch = data[i]
        b = ord(ch)
        if b == 0x1B:
            m = CSI.match(data, i)
            if m:
                arg, cmd = m.group(1), m.group(2)
                n = int(arg) if arg.isdigit() else 1
                if cmd == "A":
                    row = max(0, row - n)
                elif cmd == "K":
                    mode = int(arg) if arg.isdigit() else 0
                    line = lines[row]
                    if mode == 0:
                        del line[col:]
                    elif mode == 2:
                        line[:] = [" "] * min(col, len(line))
                i = m.end()
                continue
            i += 1
            continue
        if b == 0x0D:
            col = 0
        elif b == 0x0A:
            row += 1
            col = 0
            while len(lines) <= row:
                lines.append([])
        elif b == 0x08:
            col = max(0, col - 1)
        elif b >= 0x20:
            if col >= cols:
                row += 1
                col = 0
                while len(lines) <= row:
                    lines.append([])
            line = lines[row]
            while len(line) < col:
                line.append(" ")
            if col < len(line):
                line[col] = ch
            else:
                line.append(ch)
            col += 1
        i += 1
    text = ["".join(l).rstrip() for l in lines]
    while text and not text[-1]:
        text.pop()
    return text


def run_on_pty(cmd, cols, timeout, trigger=None):
    """Run cmd on a pty `cols` wide (the size set by the child, on its own
    terminal, before exec) until it closes the terminal or writes nothing for
    `timeout` seconds; SIGINT to its process group once when the text written
    so far first matches `trigger`.  Returns (bytes written, exit status)."""
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
        os.execvp(cmd[0], cmd)
    out = bytearray()
    while True:
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if trigger and trigger.search(CSI.sub("", out.decode("utf-8", "replace"))):
            trigger = None
            os.killpg(pid, signal.SIGINT)
    _, status = os.waitpid(pid, 0)
    return bytes(out), os.waitstatus_to_exitcode(status)


def main():
    args = sys.argv[1:]
    cols, raw, trigger = 100, None, None
    while args and args[0] != "--":
        if args[0] == "--cols":
            cols = int(args[1])
            args = args[2:]
        elif args[0] == "--raw":
            raw = args[1]
            args = args[2:]
        elif args[0] == "--interrupt-on":
            trigger = re.compile(args[1])
            args = args[2:]
        else:
            sys.exit("usage: ptyscreen.py [--cols N] [--raw FILE] [--interrupt-on REGEX] -- "
                     "COMMAND [ARGS...]")
    out, code = run_on_pty(args[1:], cols, 60, trigger)
    if raw:
        with open(raw, "wb") as f:
            f.write(out)
    # the pty turns LF into CR LF; the model handles both
    for line in screen(out, cols):
        print(line)
    sys.exit(code)


if __name__ == "__main__":
    main()
