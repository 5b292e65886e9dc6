package dev.fencing.it.weaving;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

public class InterfaceAnnotatedRepositoryImpl implements InterfaceAnnotatedRepository {

    public final List<String> saved = new CopyOnWriteArrayList<>();

    @Override
    public void save(String value) {
        saved.add(value);
    }
}
