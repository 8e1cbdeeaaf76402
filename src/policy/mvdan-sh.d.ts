/**
 * The slice of `mvdan-sh` (mvdan/sh's parser compiled to JavaScript) that the
 * policy uses. The package ships no types; nodes are Go structs seen through
 * GopherJS, so only the fields read here are declared.
 */
declare module "mvdan-sh" {
  export interface ShPos {
    Offset(): number;
  }
  export interface ShNode {
    Pos(): ShPos;
    End(): ShPos;
    [field: string]: unknown;
  }
  export interface ShParser {
    Parse(source: string, name: string): ShNode;
  }
  export interface ShSyntax {
    NewParser(...options: unknown[]): ShParser;
    KeepComments(keep: boolean): unknown;
    Variant(language: unknown): unknown;
    LangBash: unknown;
    Walk(node: ShNode, visit: (node: ShNode | null) => boolean): void;
    NodeType(node: ShNode): string;
  }
  const sh: { syntax: ShSyntax };
  export default sh;
}
