package dev.fencing.it.weavingfaults;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Implements the interface-annotated repository; weaving leaves it unfenced (the documented limitation). */
public class InterfaceAnnotatedRepositoryImpl implements InterfaceAnnotatedRepository {

    public final List<String> saved = new CopyOnWriteArrayList<>();

    @Override
    public void save(String value) {
        saved.add(value);
    }
}
