package dev.fencing.it.weaving;

/** A generic interface: a class implementing it for a type argument gets a bridge method. */
public interface Saving<T> {
    String save(T item);
}
