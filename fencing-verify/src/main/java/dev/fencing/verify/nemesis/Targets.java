package dev.fencing.verify.nemesis;

import java.util.List;

/** The client processes of a run, as the nemeses see them. */
public interface Targets {

    /** The clients running now. */
    List<? extends Target> live();

    /** Kills {@code target} (SIGKILL), waits for it to die and starts a replacement with a new process number. */
    void killAndReplace(Target target) throws InterruptedException;
}
