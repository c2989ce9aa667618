# rss.bash - peak_rss CMD...: the peak RSS in kB of a command (python's
# getrusage of its children: the fork of python counts too, an upper bound
# by about 10 MB); the command's exit status is peak_rss's.
peak_rss() {
	python3 -c 'import resource, subprocess, sys
r = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r)' "$@"
}
