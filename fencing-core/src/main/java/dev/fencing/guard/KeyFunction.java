package dev.fencing.guard;

/**
 * Internal: public for the Spring and AspectJ adapters (fencing-spring), not for applications.
 * Computes the entity key of a fenced call from its arguments (for example by a SpEL expression compiled once),
 * narrowing the fence from {@code accounts} to {@code accounts:42}. Must be thread-safe and side-effect free.
 */
@FunctionalInterface
public interface KeyFunction {

    /** The key for these arguments; {@code null} means the entity cannot be told, and the call is rejected. */
    Object keyOf(Object[] args);
}
