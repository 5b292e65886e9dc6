package dev.fencing.verify.nemesis;

/** A client process a nemesis can hit. */
public interface Target {

    /** How the history names it: {@code client-<process>}. */
    String name();

    /** Whether it said it is inside its critical section (read done, write not yet). */
    boolean inCriticalSection();

    /** Whether the process is still running. */
    boolean isAlive();

    /** Stops the process (SIGSTOP); it stays stopped until {@link #resume()}. */
    void pause();

    /** Continues a paused process (SIGCONT). */
    void resume();
}
