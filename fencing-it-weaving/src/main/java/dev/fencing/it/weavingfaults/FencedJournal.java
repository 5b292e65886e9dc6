package dev.fencing.it.weavingfaults;

import dev.fencing.annotation.Fenced;

/** Type-level @Fenced on an interface: Spring proxies honour it, AspectJ weaving cannot see it. */
@Fenced(resource = "woven-journal")
public interface FencedJournal {
    void record(String line);
}
