# tests/lib/fleet.bash - the lab's four machines as the stand-in libcuda
# plays them (fleet.bats, fleet_install.bats; docs/fleet.md): a 12.0 GPU with
# driver 12.8, an 8.0 GPU with driver 12.6, no driver, and a 12.0 GPU behind
# driver 11.8.  Needs $STANDIN (the stand-in's path) and $BATS_FILE_TMPDIR.

# machine NAME: the stand-in's environment for one of the four machines
machine() {
	case $1 in
	lab-a) echo "OFFWHEEL_LIBCUDA=$STANDIN OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12.8" ;;
	lab-b) echo "OFFWHEEL_LIBCUDA=$STANDIN OW_STANDIN_CC=8.0 OW_STANDIN_DRIVER=12.6" ;;
	lab-c) echo "OFFWHEEL_LIBCUDA=$BATS_FILE_TMPDIR/no-driver/libcuda.so.1" ;;
	lab-d) echo "OFFWHEEL_LIBCUDA=$STANDIN OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=11.8" ;;
	esac
}

on() { # NAME CMD...: run offwheel as on that machine
	local m=$1
	shift
	env $(machine "$m") "$OFFWHEEL" "$@"
}
