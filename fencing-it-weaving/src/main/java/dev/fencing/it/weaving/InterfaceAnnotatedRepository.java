package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

/** A method-level annotation on an interface method: invisible to AspectJ weaving. */
public interface InterfaceAnnotatedRepository {
    @Fenced(resource = "woven-invisible")
    void save(String value);
}
