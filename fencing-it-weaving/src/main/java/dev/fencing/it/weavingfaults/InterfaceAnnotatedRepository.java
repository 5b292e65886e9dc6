package dev.fencing.it.weavingfaults;

import dev.fencing.annotation.Fenced;

/** A method-level annotation on an interface method: invisible to AspectJ weaving. */
public interface InterfaceAnnotatedRepository {
    @Fenced(resource = "woven-invisible")
    void save(String value);
}
