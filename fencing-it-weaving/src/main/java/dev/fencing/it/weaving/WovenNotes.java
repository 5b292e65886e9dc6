package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Type-level @Fenced on a woven class: its public methods are fenced, Object's methods are not. */
@Fenced(resource = "woven-notes")
public class WovenNotes {

    public final List<String> notes = new CopyOnWriteArrayList<>();

    public void note(String text) {
        notes.add(text);
    }

    @Override
    public String toString() {
        return "WovenNotes" + notes;
    }
}
