package dev.kanuki.cli;

import dev.kanuki.spi.Durations;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Reads durations as {@link Durations#parse} does: {@code 500ms}, {@code 5s}, {@code 2m}, {@code 10}. */
final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
        try {
            return Durations.parse(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
