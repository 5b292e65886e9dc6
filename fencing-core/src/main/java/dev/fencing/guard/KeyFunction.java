package dev.fencing.guard;

/**
 * Internal: public for the Spring and AspectJ adapters (fencing-spring), not for applications.
 * Computes the entity key of a fenced call from its arguments (for example by a SpEL expression compiled once),
 * narrowing the fence from {@code accounts} to {@code accounts:42}. Must be thread-safe and side-effect free. A key
 * read from one argument alone may say which ({@link #argument()}), so that a caller holding the arguments one by one
 * (the woven aspect) need not build their array.
 */
@FunctionalInterface
public interface KeyFunction {

    /** The key for these arguments; {@code null} means the entity cannot be told, and the call is rejected. */
    Object keyOf(Object[] args);

    /**
     * The index of the one argument the key is computed from, or -1 (the default) when it may read several: then
     * only {@link #keyOf(Object[])} may be asked.
     */
    default int argument() {
        return -1;
    }

    /**
     * The key for a call whose argument at {@link #argument()} is {@code argument}: what {@link #keyOf(Object[])}
     * returns for any arguments holding it there.
     *
     * @throws UnsupportedOperationException when {@link #argument()} is -1
     */
    default Object keyOfArgument(Object argument) {
        throw new UnsupportedOperationException("this key reads more than one argument");
    }
}
