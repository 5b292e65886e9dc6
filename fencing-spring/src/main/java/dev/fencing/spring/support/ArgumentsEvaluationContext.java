package dev.fencing.spring.support;

import org.springframework.expression.BeanResolver;
import org.springframework.expression.ConstructorResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.IndexAccessor;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.OperatorOverloader;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypeComparator;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.TypedValue;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A per-call evaluation context over one call's arguments, variables resolved by name through an index precomputed
 * per method, everything else from the key's shared read-only context ({@link SpelKeyFunction#READ_ONLY}). For a key
 * SpEL cannot compile: interpreted, it reads variables by name faster than it indexes the argument array.
 */
final class ArgumentsEvaluationContext implements EvaluationContext {

    private static final EvaluationContext SHARED = SpelKeyFunction.READ_ONLY;

    private final Map<String, Integer> indexByName;
    private final Object[] args;

    ArgumentsEvaluationContext(Map<String, Integer> indexByName, Object[] args) {
        this.indexByName = indexByName;
        this.args = args;
    }

    @Override
    public Object lookupVariable(String name) {
        Integer index = indexByName.get(name);
        return index == null || index >= args.length ? null : args[index];
    }

    @Override
    public TypedValue getRootObject() {
        return new TypedValue(args);
    }

    @Override
    public List<PropertyAccessor> getPropertyAccessors() {
        return SHARED.getPropertyAccessors();
    }

    @Override
    public List<IndexAccessor> getIndexAccessors() {
        return SHARED.getIndexAccessors();
    }

    @Override
    public List<ConstructorResolver> getConstructorResolvers() {
        return SHARED.getConstructorResolvers();
    }

    @Override
    public List<MethodResolver> getMethodResolvers() {
        return SHARED.getMethodResolvers();
    }

    @Override
    public BeanResolver getBeanResolver() {
        return SHARED.getBeanResolver();
    }

    @Override
    public TypeLocator getTypeLocator() {
        return SHARED.getTypeLocator();
    }

    @Override
    public TypeConverter getTypeConverter() {
        return SHARED.getTypeConverter();
    }

    @Override
    public TypeComparator getTypeComparator() {
        return SHARED.getTypeComparator();
    }

    @Override
    public OperatorOverloader getOperatorOverloader() {
        return SHARED.getOperatorOverloader();
    }

    @Override
    public TypedValue assignVariable(String name, Supplier<TypedValue> valueSupplier) {
        throw new UnsupportedOperationException("Fencing keys are read-only: cannot assign #" + name);
    }

    @Override
    public void setVariable(String name, Object value) {
        throw new UnsupportedOperationException("Fencing keys are read-only: cannot set #" + name);
    }

    @Override
    public boolean isAssignmentEnabled() {
        return false;
    }
}
