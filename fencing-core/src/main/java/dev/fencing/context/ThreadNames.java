package dev.fencing.context;

/**
 * A thread's name as the library's messages and log lines give it: its name, or, for a thread without one (a virtual
 * thread's default), its {@code toString()}, which carries its id ({@code VirtualThread[#42]/runnable@...}).
 */
public final class ThreadNames {

    private ThreadNames() {
    }

    /** {@code thread}'s name for a message; never empty. */
    public static String of(Thread thread) {
        String name = thread.getName();
        return name.isEmpty() ? thread.toString() : name;
    }
}
