export declare const OPERATIONS: Readonly<Record<string, string>>;
